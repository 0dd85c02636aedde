package adapter

import (
	"testing"
)

// TestLoadZoneKeepsOnlyZonesThatLoad: a zone is loaded once and the same
// one returned after; a name that is not a zone is refused and not kept,
// so no stream of made-up names grows the cache.
func TestLoadZoneKeepsOnlyZonesThatLoad(t *testing.T) {
	a, err := LoadZone("Europe/Paris")
	if err != nil {
		t.Fatal(err)
	}
	b, err := LoadZone("Europe/Paris")
	if err != nil || a != b {
		t.Errorf("Europe/Paris loaded again (%p, %p, %v), want the kept zone", a, b, err)
	}
	for _, bad := range []string{"Mars/Olympus_Mons", "Local", "../../etc/passwd"} {
		if _, err := LoadZone(bad); err == nil {
			t.Errorf("%q loaded", bad)
		}
		if _, kept := zones.Load(bad); kept {
			t.Errorf("%q is kept", bad)
		}
	}
}

func BenchmarkLoadZone(b *testing.B) {
	for b.Loop() {
		if _, err := LoadZone("America/Los_Angeles"); err != nil {
			b.Fatal(err)
		}
	}
}

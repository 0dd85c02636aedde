package deploycheck_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestInstallDepsNamesWhatBenchAndTheImageNeed runs .ci/install-deps as a
// user who may not install, on a PATH that has none of the tools: `bench`
// must ask for Chromium (make bench times pages in it; a fresh machine has
// none) and `image` for podman, which is what it installs when run as
// root.
func TestInstallDepsNamesWhatBenchAndTheImageNeed(t *testing.T) {
	// A folder anyone may enter: the script runs as nobody when the test
	// runs as root, and reads nothing beside itself.
	dir, err := os.MkdirTemp("", "install-deps-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(dir, "install-deps")
	if err := os.WriteFile(script, []byte(mustRead(t, "../.ci/install-deps")), 0o755); err != nil {
		t.Fatal(err)
	}
	// The PATH holds only what the script itself runs.
	bin := filepath.Join(dir, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tool := range []string{"bash", "dirname", "id", "getent"} {
		p, err := exec.LookPath(tool)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(p, filepath.Join(bin, tool)); err != nil {
			t.Fatal(err)
		}
	}
	for mode, want := range map[string]string{"bench": "chromium", "image": "podman"} {
		cmd := exec.Command(script, mode)
		cmd.Env = []string{"PATH=" + bin}
		if os.Geteuid() == 0 {
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		}
		out, err := cmd.CombinedOutput()
		missing, _, _ := strings.Cut(strings.TrimPrefix(string(out), "missing: "), " — ")
		if err == nil || !strings.HasPrefix(string(out), "missing: ") || !strings.Contains(" "+missing+" ", " "+want+" ") {
			t.Errorf(".ci/install-deps %s without %s on the PATH: %v\n%s\nwant it to say %s is missing", mode, want, err, out, want)
		}
	}
}

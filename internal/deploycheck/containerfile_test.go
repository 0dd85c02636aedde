package deploycheck_test

import (
	"path/filepath"
	"strings"
	"testing"
)

// sharedStage is the line after which the two Containerfiles say the same.
const sharedStage = "# -- the final stage from here on is shared with Containerfile.prebuilt --\n"

// TestTheContainerfilesShareTheirFinalStage fails when the root
// Containerfile (a Go build stage, needs a registry) and
// image/Containerfile.prebuilt (the root filesystem laid out on the host;
// the one the image test builds) give the image a different user,
// environment or entrypoint: the image test stands for both.
func TestTheContainerfilesShareTheirFinalStage(t *testing.T) {
	tail := func(path string) string {
		_, after, ok := strings.Cut(mustRead(t, path), sharedStage)
		if !ok {
			t.Fatalf("%s lacks the line %q", path, sharedStage)
		}
		return after
	}
	root, prebuilt := tail(filepath.Join("..", "Containerfile")), tail(filepath.Join("image", "Containerfile.prebuilt"))
	if root != prebuilt {
		t.Errorf("the final stages differ:\nContainerfile:\n%s\nimage/Containerfile.prebuilt:\n%s", root, prebuilt)
	}
	for _, want := range []string{"FROM scratch\nCOPY --from=build /rootfs/ /\n" + sharedStage, "RUN deploy/image/rootfs /rootfs\n"} {
		if !strings.Contains(mustRead(t, filepath.Join("..", "Containerfile")), want) {
			t.Errorf("the root Containerfile lacks %q", want)
		}
	}
	if !strings.Contains(mustRead(t, filepath.Join("image", "Containerfile.prebuilt")), "FROM scratch\nCOPY rootfs/ /\n"+sharedStage) {
		t.Error("image/Containerfile.prebuilt does not copy the prepared root filesystem onto scratch")
	}
}

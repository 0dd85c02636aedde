// Package chromium finds the Chromium binary the browser tests and the
// benchmarks drive: CHROMIUM_PATH, else chromium, chromium-browser or
// google-chrome on PATH.
package chromium

import (
	"os"
	"os/exec"
)

// Path returns Chromium's path, or exec.ErrNotFound.
func Path() (string, error) {
	if p := os.Getenv("CHROMIUM_PATH"); p != "" {
		return p, nil
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", exec.ErrNotFound
}

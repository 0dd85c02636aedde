package deploycheck_test

import (
	"bytes"
	"crypto/x509"
	"debug/elf"
	"errors"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"countersign/internal/slowtest"
)

// TestTheImageServesReadyzAsItsUserOnAReadOnlyRoot builds the console's
// image as `make image` does (podman, no registry), saves it in OCI layout
// and lays its layers out as a runtime would — `podman run` needs more than
// a sandbox allows — then runs the image's entrypoint in that root
// filesystem, mounted read-only, as the image's user, with the compose
// file's environment, as the countersign role on an empty database through
// PgBouncer run with the compose file's pgbouncer.ini: the embedded
// migrations run and /readyz answers 200. The image holds the console, CA
// certificates, time zones and a passwd naming its user, and nothing else
// that runs: no shell.
func TestTheImageServesReadyzAsItsUserOnAReadOnlyRoot(t *testing.T) {
	slowtest.Skip(t, "builds the container image with podman and runs its entrypoint")
	if os.Geteuid() != 0 {
		if os.Getenv("CI") == "true" {
			t.Fatal("the image test runs its entrypoint in a chroot, which needs root")
		}
		t.Skip("needs root to run the image's entrypoint in a chroot (CI runs it as root)")
	}
	if _, err := exec.LookPath("podman"); err != nil {
		t.Fatal("podman is needed to build the image: .ci/install-deps installs it (apt-get install -y podman)")
	}
	began := time.Now()
	tag := "localhost/countersign-test:" + randomHex(t, 6)
	if out, err := exec.Command("image/build", tag, t.TempDir()).CombinedOutput(); err != nil {
		t.Fatalf("image/build: %v\n%s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("podman", "rmi", tag).Run() })
	saved := filepath.Join(t.TempDir(), "oci")
	if out, err := exec.Command("podman", "image", "save", "--format", "oci-dir", "-o", saved, tag).CombinedOutput(); err != nil {
		t.Fatalf("podman image save: %v\n%s", err, out)
	}
	img := readOCI(t, saved)
	root := filepath.Join(t.TempDir(), "root")
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	img.unpack(t, root)
	built := time.Since(began)

	uid, gid := checkImageConfig(t, img, root)
	checkImageFiles(t, root)
	mountReadOnly(t, root)

	addr := freeAddr(t)
	env := append(append([]string{}, img.Config.Env...), composeDatabase(t)...)
	env = append(env, "ADDR="+addr)

	cmd := exec.Command(img.Config.Entrypoint[0], img.Config.Cmd...)
	cmd.Env = env
	cmd.Dir = img.Config.WorkingDir
	cmd.SysProcAttr = &syscall.SysProcAttr{Chroot: root, Credential: &syscall.Credential{Uid: uid, Gid: gid}}
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	waitReady(t, "http://"+addr, done, &stderr)
	t.Logf("image built, saved and unpacked in %v; its console ready %v later", built.Round(time.Millisecond),
		(time.Since(began) - built).Round(time.Millisecond))

	if got := processUID(t, cmd.Process.Pid); got != uid {
		t.Errorf("the console runs as uid %d, want the image's %d", got, uid)
	}
	if !strings.Contains(stderr.String(), `"msg":"database ready","migrations_applied":`) ||
		strings.Contains(stderr.String(), `"migrations_applied":0`) {
		t.Errorf("the image's console did not migrate the empty database:\n%s", stderr.String())
	}
	if strings.Contains(stderr.String(), "no idle_in_transaction_session_timeout") {
		t.Errorf("the console's pooled sessions lack the role's idle-in-transaction timeout:\n%s", stderr.String())
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("the console's exit on SIGTERM: %v\n%s", err, stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("the console did not stop on SIGTERM:\n%s", stderr.String())
	}
}

// checkImageConfig checks the image runs /countersign as a user other than
// root that its passwd names, and returns that user's ids.
func checkImageConfig(t *testing.T, img ociImage, root string) (uid, gid uint32) {
	t.Helper()
	c := img.Config
	if len(c.Entrypoint) != 1 || c.Entrypoint[0] != "/countersign" || len(c.Cmd) != 0 {
		t.Fatalf("entrypoint %q, cmd %q: want [/countersign] and no cmd", c.Entrypoint, c.Cmd)
	}
	u, g, ok := strings.Cut(c.User, ":")
	uid64, err1 := strconv.ParseUint(u, 10, 32)
	gid64, err2 := strconv.ParseUint(g, 10, 32)
	if !ok || err1 != nil || err2 != nil || uid64 == 0 || gid64 == 0 {
		t.Fatalf("image user %q: want numeric uid:gid other than root's", c.User)
	}
	if !strings.Contains(mustRead(t, filepath.Join(root, "etc", "passwd")), ":x:"+c.User+":") {
		t.Errorf("the image's /etc/passwd has no entry for %s", c.User)
	}
	if _, ok := c.ExposedPorts["8080/tcp"]; !ok || !containsEnv(c.Env, "ADDR=0.0.0.0:8080") {
		t.Errorf("exposed %v, env %q: want 8080/tcp and ADDR=0.0.0.0:8080", c.ExposedPorts, c.Env)
	}
	return uint32(uid64), uint32(gid64)
}

// checkImageFiles checks what the root filesystem holds: one executable,
// the console, static; CA certificates; time zones.
func checkImageFiles(t *testing.T, root string) {
	t.Helper()
	var executables []string
	_ = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if fi, err := d.Info(); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			executables = append(executables, strings.TrimPrefix(path, root))
		}
		return nil
	})
	if len(executables) != 1 || executables[0] != "/countersign" {
		t.Errorf("executables in the image: %q; want only /countersign (no shell)", executables)
	}
	bin, err := elf.Open(filepath.Join(root, "countersign"))
	if err != nil {
		t.Fatal(err)
	}
	defer bin.Close()
	for _, p := range bin.Progs {
		if p.Type == elf.PT_INTERP {
			t.Error("/countersign asks for a dynamic loader: want a static binary (CGO_ENABLED=0)")
		}
	}
	pool := x509.NewCertPool()
	if pem, err := os.ReadFile(filepath.Join(root, "etc/ssl/certs/ca-certificates.crt")); err != nil || !pool.AppendCertsFromPEM(pem) {
		t.Errorf("the image's CA certificates: %v", err)
	}
	if tz, err := os.ReadFile(filepath.Join(root, "usr/share/zoneinfo/Europe/Paris")); err != nil {
		t.Error(err)
	} else if _, err := time.LoadLocationFromTZData("Europe/Paris", tz); err != nil {
		t.Errorf("the image's time zones: %v", err)
	}
}

// mountReadOnly bind-mounts root read-only onto itself until the test
// ends, so nothing the console does can write to its root filesystem.
func mountReadOnly(t *testing.T, root string) {
	t.Helper()
	if err := syscall.Mount(root, root, "", syscall.MS_BIND, ""); err != nil {
		t.Fatalf("bind-mount the image's root: %v", err)
	}
	t.Cleanup(func() { _ = syscall.Unmount(root, syscall.MNT_DETACH) })
	if err := syscall.Mount("", root, "", syscall.MS_BIND|syscall.MS_REMOUNT|syscall.MS_RDONLY, ""); err != nil {
		t.Fatalf("remount the image's root read-only: %v", err)
	}
	if err := os.WriteFile(filepath.Join(root, "probe"), nil, 0o600); !errors.Is(err, syscall.EROFS) {
		t.Fatalf("writing to the image's root: %v, want a read-only file system", err)
	}
}

func waitReady(t *testing.T, base string, done <-chan error, stderr *bytes.Buffer) {
	t.Helper()
	deadline := time.After(60 * time.Second)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		if res, err := http.Get(base + "/readyz"); err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return
			}
		}
		select {
		case err := <-done:
			t.Fatalf("the image's console exited before it was ready: %v\n%s", err, stderr.String())
		case <-deadline:
			t.Fatalf("the image's console never answered /readyz with 200:\n%s", stderr.String())
		case <-tick.C:
		}
	}
}

// processUID reads the real uid of process pid.
func processUID(t *testing.T, pid int) uint32 {
	t.Helper()
	status := mustRead(t, "/proc/"+strconv.Itoa(pid)+"/status")
	for _, line := range strings.Split(status, "\n") {
		if f := strings.Fields(line); len(f) > 1 && f[0] == "Uid:" {
			n, err := strconv.ParseUint(f[1], 10, 32)
			if err != nil {
				t.Fatal(err)
			}
			return uint32(n)
		}
	}
	t.Fatalf("no Uid line in /proc/%d/status", pid)
	return 0
}

func containsEnv(env []string, kv string) bool {
	for _, e := range env {
		if e == kv {
			return true
		}
	}
	return false
}

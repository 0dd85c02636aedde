package pgcluster

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// FindBinDir returns PG_BIN when set, else the bin folder of the newest
// PostgreSQL under /usr/lib/postgresql, or an error telling how to install it.
func FindBinDir() (string, error) {
	if dir := os.Getenv("PG_BIN"); dir != "" {
		return dir, nil
	}
	matches, _ := filepath.Glob("/usr/lib/postgresql/*/bin/postgres")
	if len(matches) == 0 {
		return "", errors.New("pgcluster: no PostgreSQL binaries under /usr/lib/postgresql: install them (apt-get install -y postgresql) or set PG_BIN")
	}
	version := func(p string) float64 {
		v, _ := strconv.ParseFloat(filepath.Base(filepath.Dir(filepath.Dir(p))), 64)
		return v
	}
	sort.Slice(matches, func(i, j int) bool { return version(matches[i]) > version(matches[j]) })
	return filepath.Dir(matches[0]), nil
}

// osUser is the account PostgreSQL runs as when we are root; nil means "as
// ourselves", and every method is then a no-op.
type osUser struct {
	uid, gid uint32
}

func serverUser() (*osUser, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("pgcluster: running as root needs the postgres OS user (apt-get install -y postgresql creates it): %w", err)
	}
	uid, _ := strconv.ParseUint(u.Uid, 10, 32)
	gid, _ := strconv.ParseUint(u.Gid, 10, 32)
	return &osUser{uid: uint32(uid), gid: uint32(gid)}, nil
}

func (u *osUser) procAttr() *syscall.SysProcAttr {
	if u == nil {
		return &syscall.SysProcAttr{}
	}
	return &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: u.uid, Gid: u.gid, NoSetGroups: true}}
}

func (u *osUser) chown(paths ...string) error {
	if u == nil {
		return nil
	}
	for _, p := range paths {
		if err := os.Chown(p, int(u.uid), int(u.gid)); err != nil {
			return fmt.Errorf("pgcluster: hand %s to the postgres OS user: %w", p, err)
		}
	}
	return nil
}

// unreachableBy explains why u cannot traverse every folder down to dir, or
// returns "" when it can.
func unreachableBy(u *osUser, dir string) string {
	for d := dir; ; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err == nil {
			st := fi.Sys().(*syscall.Stat_t)
			mode := fi.Mode().Perm()
			ok := mode&0o001 != 0 ||
				(st.Gid == u.gid && mode&0o010 != 0) ||
				(st.Uid == u.uid && mode&0o100 != 0)
			if !ok {
				return fmt.Sprintf("%s is mode %v", d, mode)
			}
		}
		if d == filepath.Dir(d) {
			return ""
		}
	}
}

// socketDirFor keeps the socket in the data dir unless that path is too long
// for a unix socket address (108 bytes), in which case it uses a short folder
// under the temp dir.
func socketDirFor(dataDir string, owner *osUser) (string, error) {
	if len(dataDir)+len("/.s.PGSQL.65535.lock") < 100 {
		return dataDir, nil
	}
	dir := filepath.Join(os.TempDir(), "cs-pg-"+shortHash(dataDir))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("pgcluster: socket dir: %w", err)
	}
	return dir, owner.chown(dir)
}

// clearStaleServer makes a data dir left by a killed run startable: a live
// postmaster still serving this data dir (orphaned by a SIGKILL) is shut
// down, and a postmaster.pid naming a dead or unrelated process is removed,
// since PostgreSQL would refuse to start when that pid was reused.
func clearStaleServer(dataDir string, log *slog.Logger) error {
	pidPath := filepath.Join(dataDir, "postmaster.pid")
	b, err := os.ReadFile(pidPath)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("pgcluster: read %s: %w", pidPath, err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(strings.SplitN(string(b), "\n", 2)[0]))
	if pid > 0 && servesDataDir(pid, dataDir) {
		log.Warn("a postgres from an earlier run still serves this data dir; shutting it down", "pid", pid)
		_ = syscall.Kill(pid, syscall.SIGINT)
		deadline := time.Now().Add(30 * time.Second)
		for processAlive(pid) {
			if time.Now().After(deadline) {
				_ = syscall.Kill(pid, syscall.SIGKILL)
				deadline = time.Now().Add(10 * time.Second)
			}
			time.Sleep(50 * time.Millisecond) // polling a foreign process's exit; there is nothing to wait on
		}
	}
	if _, err := os.Stat(pidPath); err == nil {
		log.Warn("removing stale postmaster.pid left by a killed run", "pid", pid)
		if err := os.Remove(pidPath); err != nil {
			return fmt.Errorf("pgcluster: remove stale %s: %w", pidPath, err)
		}
	}
	waitForOrphans(dataDir, log)
	return nil
}

// waitForOrphans waits for server processes of a killed postmaster that
// still run in dataDir (its backends and background workers notice the
// postmaster's death only after a moment, and hold its shared memory until
// they exit, which would make the next start fail). After 5 seconds they
// are killed.
func waitForOrphans(dataDir string, log *slog.Logger) {
	deadline := time.Now().Add(5 * time.Second)
	for {
		orphans := serverProcessesIn(dataDir)
		if len(orphans) == 0 {
			return
		}
		if time.Now().After(deadline) {
			log.Warn("killing server processes left by a killed run", "pids", orphans)
			for _, pid := range orphans {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
			deadline = time.Now().Add(10 * time.Second)
		}
		time.Sleep(25 * time.Millisecond) // foreign processes' exits: nothing to wait on
	}
}

// serverProcessesIn lists live postgres processes whose working directory
// is dataDir.
func serverProcessesIn(dataDir string) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		if servesDataDir(pid, dataDir) {
			pids = append(pids, pid)
		}
	}
	return pids
}

func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	if err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	// A zombie is dead for our purposes.
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	return len(fields) > 0 && fields[0] != "Z"
}

func servesDataDir(pid int, dataDir string) bool {
	if !processAlive(pid) {
		return false
	}
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil || !strings.Contains(string(cmdline), "postgres") {
		return false
	}
	cwd, err := os.Readlink(fmt.Sprintf("/proc/%d/cwd", pid))
	if err != nil {
		// Not allowed to look: trust the command line naming our data dir.
		return strings.Contains(string(cmdline), dataDir)
	}
	return filepath.Clean(cwd) == filepath.Clean(dataDir)
}

func shortHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:6])
}

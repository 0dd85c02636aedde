package pgcluster

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"countersign/internal/slowtest"
)

func startTestCluster(t *testing.T, dir string, durable bool) *Cluster {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	c, err := Start(ctx, Config{DataDir: dir, Durable: durable})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { _ = c.Stop(context.Background()) })
	return c
}

func exec1(t *testing.T, c *Cluster, sql string) string {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, c.URL("postgres"))
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer conn.Close(ctx)
	if !strings.HasPrefix(sql, "SELECT") {
		if _, err := conn.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		return ""
	}
	var out string
	if err := conn.QueryRow(ctx, sql).Scan(&out); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return out
}

func testDir(t *testing.T) string {
	t.Helper()
	// Not t.TempDir: its parent folder is private to us, and the server may
	// run as another OS user.
	dir, err := os.MkdirTemp("", "pgcluster-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir); os.Remove(dir + ".log") })
	return dir
}

func TestStartServesAndStops(t *testing.T) {
	t.Parallel()
	dir := testDir(t)
	c := startTestCluster(t, dir, false)

	if got := exec1(t, c, "SELECT current_setting('listen_addresses')"); got != "127.0.0.1" {
		t.Errorf("listen_addresses = %q, want 127.0.0.1", got)
	}
	if got := exec1(t, c, "SELECT current_setting('unix_socket_directories')"); got != c.SocketDir() {
		t.Errorf("unix_socket_directories = %q, want %q", got, c.SocketDir())
	}
	if _, err := os.Stat(filepath.Join(c.SocketDir(), fmt.Sprintf(".s.PGSQL.%d", c.Port()))); err != nil {
		t.Errorf("unix socket missing: %v", err)
	}
	if os.Geteuid() == 0 {
		uid := processUID(t, c.PID())
		if uid == 0 {
			t.Errorf("postgres runs as root; want the postgres OS user")
		}
	}

	if err := c.Stop(context.Background()); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	select {
	case <-c.Exited():
	default:
		t.Fatal("Stop returned but the server process is still running")
	}
	if conn, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(c.Port())), time.Second); err == nil {
		conn.Close()
		t.Errorf("port %d still accepts connections after Stop", c.Port())
	}
	if _, err := os.Stat(filepath.Join(dir, "postmaster.pid")); err == nil {
		t.Errorf("postmaster.pid left after a clean stop")
	}
}

func TestPortIsChosenAtEachStart(t *testing.T) {
	t.Parallel()
	a := startTestCluster(t, testDir(t), false)
	b := startTestCluster(t, testDir(t), false)
	if a.Port() == b.Port() {
		t.Fatalf("two clusters got the same port %d", a.Port())
	}
}

// A SIGKILLed server leaves postmaster.pid behind; here the pid in it even
// names a live process (ours), as happens when pids are reused.
func TestStartsAfterKilledServerWithReusedPid(t *testing.T) {
	slowtest.Skip(t, "kills a PostgreSQL server with SIGKILL")
	t.Parallel()
	dir := testDir(t)
	// Durable, so the committed table is on disk when the server is killed.
	first := startTestCluster(t, dir, true)
	exec1(t, first, "CREATE TABLE survives AS SELECT 'kept'::text AS v")
	if err := syscall.Kill(first.PID(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-first.Exited()
	pidFile := filepath.Join(dir, "postmaster.pid")
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatalf("expected a stale postmaster.pid after SIGKILL: %v", err)
	}
	lines := strings.SplitN(string(b), "\n", 2)
	if err := os.WriteFile(pidFile, []byte(strconv.Itoa(os.Getpid())+"\n"+lines[1]), 0o600); err != nil {
		t.Fatal(err)
	}

	second := startTestCluster(t, dir, true)
	if got := exec1(t, second, "SELECT v FROM survives"); got != "kept" {
		t.Errorf("data after restart = %q, want kept", got)
	}
}

// The console is killed with SIGKILL while its cluster runs: the next start
// on the same data dir must work and keep the data.
func TestStartsAfterOwnerProcessKilled(t *testing.T) {
	slowtest.Skip(t, "kills its owner process with SIGKILL")
	t.Parallel()
	dir := testDir(t)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "PGCLUSTER_HELPER_DIR="+dir)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "ready ") {
		_ = cmd.Process.Kill()
		t.Fatalf("helper did not report ready: %q %v", line, err)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()

	c := startTestCluster(t, dir, false)
	if got := exec1(t, c, "SELECT v FROM made_by_helper"); got != "yes" {
		t.Errorf("data after owner was killed = %q, want yes", got)
	}
}

// TestMain doubles as the owner process of TestStartsAfterOwnerProcessKilled:
// with PGCLUSTER_HELPER_DIR set it starts a cluster there, reports its port
// and waits to be killed.
func TestMain(m *testing.M) {
	dir := os.Getenv("PGCLUSTER_HELPER_DIR")
	if dir == "" {
		os.Exit(m.Run())
	}
	ctx := context.Background()
	c, err := Start(ctx, Config{DataDir: dir})
	if err == nil {
		var conn *pgx.Conn
		if conn, err = pgx.Connect(ctx, c.URL("postgres")); err == nil {
			_, err = conn.Exec(ctx, "CREATE TABLE made_by_helper AS SELECT 'yes'::text AS v")
		}
	}
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	fmt.Printf("ready %d\n", c.Port())
	select {} // until killed
}

func TestFindBinDirHonoursPGBin(t *testing.T) {
	t.Setenv("PG_BIN", "/opt/pg/bin")
	got, err := FindBinDir()
	if err != nil || got != "/opt/pg/bin" {
		t.Fatalf("FindBinDir() = %q, %v; want /opt/pg/bin", got, err)
	}
}

func processUID(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) > 1 && f[0] == "Uid:" {
			uid, _ := strconv.Atoi(f[1])
			return uid
		}
	}
	t.Fatal("no Uid line")
	return -1
}

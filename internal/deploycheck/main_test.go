package deploycheck_test

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"net"
	"os"
	"testing"

	"countersign/store/dbtest"
)

// TestMain runs the tests from deploy/, the folder they check, so paths
// read as that folder's README writes them.
func TestMain(m *testing.M) {
	if err := os.Chdir("../../deploy"); err != nil {
		panic(err)
	}
	dbtest.Main(m)
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func randomHex(t *testing.T, n int) string {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// randomSeed is the base64 of 32 random bytes, as openssl rand -base64 32
// prints.
func randomSeed(t *testing.T) string {
	t.Helper()
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(b)
}

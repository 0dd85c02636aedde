package web_test

import (
	"testing"

	"countersign/store/dbtest"
)

// TestMain stops the test database's cluster when the package's tests end.
func TestMain(m *testing.M) { dbtest.Main(m) }

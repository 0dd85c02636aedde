package main

import (
	"strings"
	"testing"
	"time"
)

// TestReconcileTimings: the sweep's first look and the shop's settle time
// come from flags or the environment, default to the control plane's and
// the shop adapter's, and a settle time no longer than a call may take is
// refused (a call still on its way would be settled as not applied).
func TestReconcileTimings(t *testing.T) {
	env := map[string]string{}
	get := func(k string) string { return env[k] }
	if c, err := parseConfig(nil, get); err != nil || c.ReconcileFirst != 15*time.Second || c.ShopSettleAfter != time.Minute {
		t.Errorf("defaults: %v, %v, %v; want 15s and 1m", c.ReconcileFirst, c.ShopSettleAfter, err)
	}
	env["RECONCILE_FIRST"], env["SHOP_SETTLE_AFTER"] = "1s", "10s"
	if c, err := parseConfig([]string{"-adapter-timeout", "2s"}, get); err != nil || c.ReconcileFirst != time.Second || c.ShopSettleAfter != 10*time.Second {
		t.Errorf("from the environment: %v, %v, %v; want 1s and 10s", c.ReconcileFirst, c.ShopSettleAfter, err)
	}
	if _, err := parseConfig([]string{"-shop-settle-after", "15s"}, get); err == nil || !strings.Contains(err.Error(), "-shop-settle-after") {
		t.Errorf("a settle time as long as the adapter timeout: %v; want the flag named", err)
	}
	if _, err := parseConfig([]string{"-reconcile-first", "0s"}, get); err == nil || !strings.Contains(err.Error(), "-reconcile-first") {
		t.Errorf("0s: %v; want the flag named", err)
	}
}

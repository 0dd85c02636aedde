package console

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"countersign/internal/controlplane"
	"countersign/internal/locale"
)

// auditWords says an admin's action on the audit trail: a checkpoint
// signed (of how many entries), or an export (its period and filter).
func auditWords(e controlplane.Event) string {
	str := func(k string) string { s, _ := e.Data[k].(string); return strings.TrimSpace(s) }
	if e.Action == controlplane.EventAuditCheckpointSigned {
		if size, ok := e.Data["size"]; ok {
			return say("console.timeline.audit.checkpoint_signed", locale.Params{"Size": fmt.Sprint(size)})
		}
		return say("console.timeline.audit.checkpoint_signed_bare", nil)
	}
	if str("from") == "" || str("to") == "" {
		return say("console.timeline.audit.exported_bare", nil)
	}
	p := locale.Params{"From": str("from"), "To": str("to")}
	filter, _ := e.Data["filter"].(map[string]any)
	if len(filter) == 0 {
		return say("console.timeline.audit.exported", p)
	}
	var only []string
	for _, k := range slices.Sorted(maps.Keys(filter)) {
		only = append(only, fmt.Sprintf("%s %v", k, filter[k]))
	}
	p["Filter"] = strings.Join(only, ", ")
	return say("console.timeline.audit.exported_filtered", p)
}

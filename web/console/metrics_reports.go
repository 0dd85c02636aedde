package console

import (
	"context"

	"countersign/internal/assistants"
	"countersign/internal/metrics"
	"countersign/internal/money"
	"countersign/views"
)

// withoutTaskCard is the metrics page's "Reported without a vouched
// customer": each assistant's conversations and reports that count in no
// figure, named for people, and the assistants whose reports count
// without one by an admin's grant (so the page says whose claims its
// figures include).
func (h *Handler) withoutTaskCard(ctx context.Context, rep metrics.Report) views.WithoutTaskCard {
	var list []assistants.Assistant
	if h.cfg.Assistants != nil {
		list, _ = h.cfg.Assistants.List(ctx) // unnamed on a failed read: shown by id
	}
	names := map[string]string{}
	var granted []string
	for _, a := range list {
		names[a.ID] = a.Name
		if a.Grants.ReportsWithoutTask && (rep.Filter.Assistant == "" || rep.Filter.Assistant == a.ID) {
			granted = append(granted, a.Name)
		}
	}
	c := views.WithoutTaskCard{Granted: joinWords(granted)}
	for _, u := range rep.WithoutTask {
		name := names[u.AssistantID]
		if name == "" {
			name = u.AssistantID
		}
		c.Rows = append(c.Rows, views.WithoutTaskRow{AssistantID: u.AssistantID, Assistant: name,
			Conversations: money.Count(u.Conversations), Events: money.Count(u.Events)})
	}
	return c
}

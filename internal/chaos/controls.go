package chaos

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// taskControl pauses, resumes or cancels a task through the API, as the
// assistant does when the customer says stop.
func (d *driver) taskControl(ctx context.Context, rnd *rand.Rand, taskID, verb string) error {
	var last error
	for attempt := range 3 {
		n := rnd.IntN(len(d.w.consoles))
		base := d.w.console(n).URL()
		var t apiTask
		if _, err := d.api.do(ctx, base, http.MethodGet, "/tasks/"+taskID, nil, "", &t); err != nil {
			last = err
			sleep(ctx, time.Duration(attempt+1)*300*time.Millisecond)
			continue
		}
		status, err := d.api.do(ctx, base, http.MethodPost, "/tasks/"+taskID+"/"+verb, map[string]any{"expected_version": t.Version}, "", &t)
		d.record(Action{Actor: "assistant", Op: verb, Console: n + 1, Status: status, Task: taskID, State: t.State, Error: errText(err)})
		if err == nil {
			d.mu.Lock()
			d.paused[taskID] = verb == "pause"
			d.controls[taskID] = append(d.controls[taskID], verb)
			d.mu.Unlock()
			return nil
		}
		last = err
		if status != 0 && status < 500 {
			return err
		}
		sleep(ctx, time.Duration(attempt+1)*300*time.Millisecond)
	}
	return last
}

// globalStop flips the installation-wide stop as the admin, through the page.
func (d *driver) globalStop(ctx context.Context, rnd *rand.Rand, stopped bool) error {
	var last error
	for attempt := range 5 {
		n := rnd.IntN(len(d.w.consoles))
		base := d.w.console(n).URL()
		status, page, err := d.admin.get(ctx, base, "/tasks")
		if err == nil && status == http.StatusSeeOther {
			if err = d.admin.signIn(ctx, base); err == nil {
				status, page, err = d.admin.get(ctx, base, "/tasks")
			}
		}
		tok := field(page, "_csrf")
		if err != nil || tok == "" {
			last = requestErr("tasks page", status, err)
			sleep(ctx, time.Duration(attempt+1)*300*time.Millisecond)
			continue
		}
		status, _, err = d.admin.post(ctx, base, "/controls/global-stop", url.Values{"_csrf": {tok}, "stopped": {strconv.FormatBool(stopped)}})
		d.record(Action{Actor: "admin", Op: "global_stop=" + strconv.FormatBool(stopped), Console: n + 1, Status: status, Error: errText(err)})
		if err == nil && status == http.StatusSeeOther {
			return nil
		}
		last = requestErr("global stop", status, err)
		sleep(ctx, time.Duration(attempt+1)*300*time.Millisecond)
	}
	return last
}

// resendDelivery has the admin resend one webhook delivery on the
// assistant's page: it is sent again at once under the same delivery id.
func (d *driver) resendDelivery(ctx context.Context, rnd *rand.Rand, id int64) error {
	n := rnd.IntN(len(d.w.consoles))
	base := d.w.console(n).URL()
	status, page, err := d.admin.get(ctx, base, "/admin/assistants")
	if err == nil && status == http.StatusSeeOther {
		if err = d.admin.signIn(ctx, base); err == nil {
			status, page, err = d.admin.get(ctx, base, "/admin/assistants")
		}
	}
	tok := field(page, "_csrf")
	if err != nil || tok == "" {
		return requestErr("assistants page", status, err)
	}
	status, _, err = d.admin.post(ctx, base, fmt.Sprintf("/admin/assistants/%s/deliveries/%d/resend", d.w.assistantID, id), url.Values{"_csrf": {tok}})
	d.record(Action{Actor: "admin", Op: "resend_delivery " + strconv.FormatInt(id, 10), Console: n + 1, Status: status, Error: errText(err)})
	if err == nil && status != http.StatusSeeOther {
		err = fmt.Errorf("resend delivery %d: %d", id, status)
	}
	return err
}

// requestErr says why a request of the driver's failed: its error, wrapped,
// when it got no answer, else the status it answered.
func requestErr(what string, status int, err error) error {
	if err != nil {
		return fmt.Errorf("%s: %d %w", what, status, err)
	}
	return fmt.Errorf("%s: %d", what, status)
}

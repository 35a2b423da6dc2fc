package soak

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The textbook retry loop: what a client does without toolgate. It waits
// ReadTimeout for each attempt, and on a timeout, a 503 or a reset it
// retries (with backoff) up to textbookAttempts times, with no
// idempotency key.
const textbookAttempts = 4

// runTextbook sends the same calls through the textbook loop to a fresh
// provider with the same faults, and counts its effects.
func runTextbook(ctx context.Context, o *Options, ops, calls []*operation) (*TextbookFigures, error) {
	prov, err := StartProvider(o.Faults, o.Seed)
	if err != nil {
		return nil, err
	}
	cl := &http.Client{Transport: newTransport(o.Callers), Timeout: o.ReadTimeout}
	fig := &TextbookFigures{Calls: len(calls)}
	attempts := make([]int, len(calls))
	succeeded := make([]bool, len(calls))
	began := time.Now()
	o.Progress.Phase("soak: textbook retry loop", len(calls))
	parallel(o.Callers, len(calls), func(i int) {
		rng := rand.New(rand.NewPCG(o.Seed, uint64(i)))
		attempts[i], succeeded[i] = textbookCall(ctx, cl, prov.URL, calls[i], i, rng)
		o.Progress.Add(1)
	})
	for i := range calls {
		fig.Attempts += attempts[i]
		if succeeded[i] {
			fig.Succeeded++
		}
	}
	fig.GaveUp = fig.Calls - fig.Succeeded
	closeCtx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := prov.Close(closeCtx); err != nil {
		return nil, err
	}
	fig.Seconds = time.Since(began).Seconds()
	fig.Provider = prov.Totals()
	fig.countDuplicates(ops, prov.Orders())
	return fig, nil
}

// textbookCall sends one call (the call-th) of op to the provider at base
// the textbook way: up to textbookAttempts POSTs without a key, 20ms
// doubling jittered backoff between them, a permanent refusal not
// retried. It returns how many attempts it made and whether one succeeded.
func textbookCall(ctx context.Context, cl *http.Client, base string, op *operation, call int, rng *rand.Rand) (attempts int, ok bool) {
	path := "/plain/refunds"
	if keyHonoured(op.tool) {
		path = "/keyed/refunds" // no key is sent: the same as plain
	}
	for attempt := range textbookAttempts {
		attempts++
		status, err := textbookPost(ctx, cl, base+path, op.args, call)
		if err == nil && status == http.StatusOK {
			return attempts, true
		}
		if err == nil && status != http.StatusServiceUnavailable && status < 500 {
			break // a permanent refusal is not retried
		}
		if attempt == textbookAttempts-1 {
			break
		}
		// Backoff: 20ms doubling, jittered.
		d := time.Duration(float64(20*time.Millisecond<<attempt) * (0.5 + rng.Float64()))
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
		}
	}
	return attempts, false
}

// countDuplicates counts, from the provider's order logs, the effects of
// the operations and those beyond each one's first: the duplicates, split
// into those of a call's own retries and those of repeated calls.
func (fig *TextbookFigures) countDuplicates(ops []*operation, orders map[string]OrderLog) {
	for _, op := range ops {
		o := orders[op.order]
		fig.Effects += o.Effects
		if o.Effects <= 1 {
			continue
		}
		fig.Duplicates += o.Effects - 1
		fig.DuplicateOperations++
		// Effects made by the same call beyond its first are its retries'.
		perCall := map[string]int{}
		for _, c := range o.Calls {
			perCall[c]++
		}
		for _, n := range perCall {
			fig.DuplicatesByRetry += n - 1
		}
	}
	fig.DuplicatesByRepeat = fig.Duplicates - fig.DuplicatesByRetry
}

// textbookPost sends one attempt; X-Soak-Call lets the provider attribute
// the refunds it makes to the call.
func textbookPost(ctx context.Context, cl *http.Client, url, body string, call int) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Soak-Call", strconv.Itoa(call))
	resp, err := cl.Do(req)
	if err != nil {
		return 0, fmt.Errorf("textbook attempt: %w", err)
	}
	defer resp.Body.Close()
	_, err = io.Copy(io.Discard, resp.Body)
	if err != nil {
		return 0, fmt.Errorf("textbook attempt: reading the answer: %w", err)
	}
	return resp.StatusCode, nil
}

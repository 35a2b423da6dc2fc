package demo

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// Print writes the report as a side-by-side table.
func Print(w io.Writer, r *Report) {
	fmt.Fprintf(w, "The refund incident: a provider that takes 9 s, 7 s, then 2.7 s; a client that waits 5 s (speed x%g).\n", r.Speed)
	fmt.Fprintf(w, "One refund of Rs %s was asked for.\n\n", rupees(amountPaise))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "\tTEXTBOOK RETRY LOOP\tTOOLGATE + IDEMPOTENCY KEY\tTOOLGATE + VERIFY READ\tTOOLGATE + MCP SERVER")
	row := func(label string, f func(Scenario) string) {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", label, f(r.Naive), f(r.ToolgateIdempotent), f(r.ToolgateVerify), f(r.ToolgateMCP))
	}
	row("refund requests received", func(s Scenario) string { return fmt.Sprint(s.Requests) })
	row("refunds made", func(s Scenario) string { return fmt.Sprint(s.Refunds) })
	row("money paid out", func(s Scenario) string { return "Rs " + rupees(s.PaidPaise) })
	row("final outcome", func(s Scenario) string { return s.Outcome })
	tw.Flush()
	fmt.Fprintln(w)
	for _, s := range []Scenario{r.Naive, r.ToolgateIdempotent, r.ToolgateVerify, r.ToolgateMCP} {
		told := s.Observations
		if len(told) == 0 {
			told = []string{s.Told}
		}
		fmt.Fprintf(w, "%s — the model was told:\n", s.Name)
		for i, t := range told {
			prefix := "  "
			if len(told) > 1 {
				prefix = fmt.Sprintf("  call %d: ", i+1)
			}
			fmt.Fprintf(w, "%s%s\n", prefix, wrap(t, 100, "    "))
		}
	}
	over := r.Naive.PaidPaise - amountPaise
	fmt.Fprintf(w, "\nThe textbook loop overpaid Rs %s. toolgate paid out exactly once in all three set-ups.\n", rupees(over))
}

func rupees(paise int64) string {
	s := fmt.Sprintf("%d.%02d", paise/100, paise%100)
	intPart, frac := s[:len(s)-3], s[len(s)-3:]
	var b strings.Builder
	for i, c := range intPart {
		if i > 0 && (len(intPart)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String() + frac
}

func wrap(s string, width int, indent string) string {
	words := strings.Fields(s)
	var b strings.Builder
	line := 0
	for _, w := range words {
		if line > 0 && line+len(w)+1 > width {
			b.WriteString("\n" + indent)
			line = 0
		} else if line > 0 {
			b.WriteByte(' ')
			line++
		}
		b.WriteString(w)
		line += len(w)
	}
	return b.String()
}

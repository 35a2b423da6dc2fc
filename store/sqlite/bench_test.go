package sqlite_test

import (
	"fmt"
	"testing"

	"github.com/toolgate/toolgate/store/storetest"
)

// BenchmarkCommit is storetest's commit benchmark; it also reports how many
// commits the writer packed into one transaction on average.
func BenchmarkCommit(b *testing.B) {
	for _, committers := range storetest.Committers {
		b.Run(fmt.Sprintf("committers=%d", committers), func(b *testing.B) {
			s := openTemp(b)
			storetest.MeasureCommits(b, s, committers)
			// The setup writes ran one per transaction.
			setup := uint64(storetest.SetupWrites * committers)
			if st := s.Stats(); st.Batches > setup {
				b.ReportMetric(float64(st.Requests-setup)/float64(st.Batches-setup), "commits/txn")
			}
		})
	}
}

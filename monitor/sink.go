package monitor

import "github.com/toolgate/toolgate/types"

// Sink is told about every committed execution row (metrics, stats). It is
// declared here, beside the rows, so that the sinks below monitor need not
// import the pipeline that feeds them.
type Sink interface {
	Record(row *types.Execution)
}

package stats

import "context"

type visibleKey struct{}

// WithVisible returns ctx carrying which tools' figures its caller may
// see: Query, Series and Alerts under it leave the others out, as if they
// had no calls (issue 27: a key sees its own tools' figures, not its
// neighbours'). A nil visible, or a context without one, sees every tool.
// The dependencies' figures are then over the visible tools only.
func WithVisible(ctx context.Context, visible func(tool string) bool) context.Context {
	return context.WithValue(ctx, visibleKey{}, visible)
}

// visibleIn is ctx's filter: true for every tool when it has none.
func visibleIn(ctx context.Context) func(tool string) bool {
	if v, _ := ctx.Value(visibleKey{}).(func(string) bool); v != nil {
		return v
	}
	return func(string) bool { return true }
}

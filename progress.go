package rowcall

import "context"

// Progress is told how far a running call has come: done of total (total 0
// when unknown), with a short message. A flow reports after each step, an
// agent after each model round; a caller that wants to hear it (the MCP
// server, for a client that sent a progressToken) puts one in the call's
// context with WithProgress.
type Progress func(done, total float64, message string)

type progressKey struct{}

// WithProgress returns ctx carrying p.
func WithProgress(ctx context.Context, p Progress) context.Context {
	return context.WithValue(ctx, progressKey{}, p)
}

// TakeProgress returns ctx without its Progress, for the calls a runner makes
// (a nested flow's steps are not the outer call's), and the Progress (one
// that does nothing when ctx carries none).
func TakeProgress(ctx context.Context) (context.Context, Progress) {
	p, _ := ctx.Value(progressKey{}).(Progress)
	if p == nil {
		return ctx, func(float64, float64, string) {}
	}
	return context.WithValue(ctx, progressKey{}, Progress(nil)), p
}

// ProgressOf returns ctx's Progress, nil when it carries none: for a runner
// that asks its upstream for progress only when someone listens.
func ProgressOf(ctx context.Context) Progress {
	p, _ := ctx.Value(progressKey{}).(Progress)
	return p
}

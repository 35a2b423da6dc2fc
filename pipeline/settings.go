package pipeline

import (
	"github.com/toolgate/toolgate/breaker"
	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/retry"
)

// The stages own their settings and their zero-value defaults; the keys of
// the file are converted into them here, where both are known, so that
// neither retry nor the breaker imports config (and, through config, every
// stage that reads it would not import them). A zero key stays zero: the
// stage applies its documented default.

// retryPolicy is a tool's retry keys as the retry stage's policy.
func retryPolicy(r config.Retry) retry.Policy {
	return retry.Policy{MaxAttempts: r.MaxAttempts, Base: r.Base.D(), Cap: r.Cap.D()}
}

// budgetSettings is a dependency's retry_budget keys as its retry budget's
// settings.
func budgetSettings(b config.RetryBudget) retry.BudgetSettings {
	return retry.BudgetSettings{Ratio: b.Ratio, MinRetries: b.MinRetries}
}

// breakerSettings is a dependency's breaker keys as its breaker's settings
// (the breaker set supplies the clock).
func breakerSettings(b config.Breaker) breaker.Settings {
	return breaker.Settings{Threshold: b.Threshold, Cooldown: b.Cooldown.D()}
}

package pipeline

import (
	"testing"
	"time"

	"github.com/toolgate/toolgate/breaker"
	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/retry"
)

// TestSettingsConversion: each policy key reaches its stage's settings
// unchanged, and a zero key stays zero (the stage's default applies).
func TestSettingsConversion(t *testing.T) {
	r := config.Retry{MaxAttempts: 2, Base: config.Duration(100 * time.Millisecond), Cap: config.Duration(time.Second)}
	if got, want := retryPolicy(r), (retry.Policy{MaxAttempts: 2, Base: 100 * time.Millisecond, Cap: time.Second}); got != want {
		t.Errorf("retryPolicy = %+v, want %+v", got, want)
	}
	if got := retryPolicy(config.Retry{}); got != (retry.Policy{}) {
		t.Errorf("retryPolicy of zero keys = %+v, want zero", got)
	}
	if got, want := budgetSettings(config.RetryBudget{Ratio: 0.5, MinRetries: 7}), (retry.BudgetSettings{Ratio: 0.5, MinRetries: 7}); got != want {
		t.Errorf("budgetSettings = %+v, want %+v", got, want)
	}
	if got, want := breakerSettings(config.Breaker{Threshold: 3, Cooldown: config.Duration(9 * time.Second)}), (breaker.Settings{Threshold: 3, Cooldown: 9 * time.Second}); got != want {
		t.Errorf("breakerSettings = %+v, want %+v", got, want)
	}
}

// TestDefaultsAgree: the defaults config fills in when a key is absent are
// the stages' own zero-value defaults, so a library user who builds the
// settings directly gets what the file gets.
func TestDefaultsAgree(t *testing.T) {
	tests := []struct {
		name        string
		file, stage any
	}{
		{"retry.max_attempts", config.DefaultMaxAttempts, retry.DefaultMaxAttempts},
		{"retry.base", config.DefaultRetryBase, retry.DefaultBase},
		{"retry.cap", config.DefaultRetryCap, retry.DefaultCap},
		{"retry_budget.ratio", config.DefaultRetryBudgetRatio, retry.DefaultBudgetRatio},
		{"retry_budget.min_retries", config.DefaultRetryBudgetMin, retry.DefaultBudgetMinRetries},
		{"breaker.threshold", config.DefaultBreakerThreshold, breaker.DefaultThreshold},
		{"breaker.cooldown", config.DefaultBreakerCooldown, breaker.DefaultCooldown},
	}
	for _, tt := range tests {
		if tt.file != tt.stage {
			t.Errorf("%s: config's default %v, the stage's %v", tt.name, tt.file, tt.stage)
		}
	}
}

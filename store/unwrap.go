package store

// As finds what a store offers beyond Store (Fencer, which only the
// stores that several processes share implement): the first of s and the
// stores it wraps that implements T. A wrapper (an instrumented store,
// say) exposes the store it wraps with an Unwrap() Store method, so that
// decorating a store never silently drops one of its optional interfaces.
func As[T any](s Store) (T, bool) {
	for s != nil {
		if t, ok := s.(T); ok {
			return t, true
		}
		u, ok := s.(interface{ Unwrap() Store })
		if !ok {
			break
		}
		s = u.Unwrap()
	}
	var zero T
	return zero, false
}

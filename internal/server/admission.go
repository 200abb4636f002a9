package server

import "sync"

// admission bounds the speech requests being spoken or waiting at once, and lets a drain wait for them: past the
// limit, or once draining, a request is turned away at once rather than queued.
type admission struct {
	mu       sync.Mutex
	limit    int
	active   int
	draining bool
	idle     chan struct{} // made by drain; closed once no admitted request is left
}

func newAdmission(limit int) *admission { return &admission{limit: limit} }

// enter admits one request, or says why not (errDraining, or errQueueFull); an admitted request calls leave.
func (a *admission) enter() *Error {
	a.mu.Lock()
	defer a.mu.Unlock()
	switch {
	case a.draining:
		return errDraining
	case a.active >= a.limit:
		return errQueueFull(a.limit)
	}
	a.active++
	return nil
}

func (a *admission) leave() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.active--
	if a.active == 0 && a.draining {
		close(a.idle)
	}
}

// drain stops admitting requests; the channel it returns is closed once those admitted have left.
func (a *admission) drain() <-chan struct{} {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.draining {
		a.draining = true
		a.idle = make(chan struct{})
		if a.active == 0 {
			close(a.idle)
		}
	}
	return a.idle
}

// isDraining reports whether drain has been called.
func (a *admission) isDraining() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.draining
}

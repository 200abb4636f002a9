package pipeline

import "context"

// InFlight bounds a job's sentences that are submitted to the engine and not yet written, across all its texts.
// Sized to the engine's queue (Engine.QueueSize), it keeps every worker and device batch fed whether the job is one
// book or a prompt set of one short sentence per item, and it bounds the audio held in memory: a sentence's audio
// is held from the moment it is spoken until the sentences before it in its text are written.
type InFlight struct{ slots chan struct{} }

// NewInFlight allows n sentences in flight (at least one).
func NewInFlight(n int) *InFlight { return &InFlight{slots: make(chan struct{}, max(1, n))} }

// Size is how many sentences may be in flight at once.
func (f *InFlight) Size() int { return cap(f.slots) }

// acquire takes a place for one sentence, waiting until one is free or ctx is done.
func (f *InFlight) acquire(ctx context.Context) error {
	select {
	case f.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// release gives back the place of a sentence that was written or abandoned.
func (f *InFlight) release() { <-f.slots }

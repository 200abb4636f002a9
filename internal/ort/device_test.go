package ort

import "testing"

// TestDeviceLockIdle: a run that may go elsewhere takes the device only when nobody holds it or waits for it; a
// free lock with a queue behind it (between two runs) is not idle.
func TestDeviceLockIdle(t *testing.T) {
	var l DeviceLock
	if !l.TryLockIdle() {
		t.Fatal("an idle device refused")
	}
	if l.TryLockIdle() {
		t.Fatal("a held device taken again")
	}
	// A run queued behind the holder: Lock counts itself among the users before it waits for the mutex.
	l.users.Add(1)
	l.mu.Unlock() // the holder lets go, as Unlock does, before its count drops: the waiter is still queued
	if l.TryLockIdle() {
		t.Error("device taken while a run was queued for it")
	}
	l.users.Add(-1) // the holder's count drops
	l.mu.Lock()     // the queued run takes the device: now it is the one user
	if l.TryLockIdle() {
		t.Error("device taken while a run held it")
	}
	l.Unlock()
	if !l.TryLockIdle() {
		t.Error("an idle device refused after the queue drained")
	}
}

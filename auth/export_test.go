package auth

// SetMaxTouchedForTest bounds the map of recently recorded keys.
func (a *Authenticator) SetMaxTouchedForTest(n int) {
	a.touchMu.Lock()
	a.maxTouched = n
	a.touchMu.Unlock()
}

// TouchedForTest returns how many keys the map holds.
func (a *Authenticator) TouchedForTest() int {
	a.touchMu.Lock()
	defer a.touchMu.Unlock()
	return len(a.touched)
}

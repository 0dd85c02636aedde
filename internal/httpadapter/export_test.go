package httpadapter

// OnTokenWait has f called each time a request of a's finds no token it
// may use and waits its turn to fetch one; a must use OAuth 2.
func OnTokenWait(a *Adapter, f func()) { a.auth.(*tokenSource).waiting = f }

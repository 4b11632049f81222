package testenv_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/deploy/dev/testenv"
)

// closed reports whether c is closed, without waiting.
func closed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

func TestBufferWatchClosesOnceTheTextIsThere(t *testing.T) {
	t.Parallel()
	var b testenv.Buffer
	_, _ = b.Write([]byte("line=started\n"))
	require.True(t, closed(b.Watch("started")), "already there: closed at once")

	done, done2, other := b.Watch("line=done"), b.Watch("line=done"), b.Watch("never")
	_, _ = b.Write([]byte("line=do"))
	require.False(t, closed(done), "half of it is not it")
	_, _ = b.Write([]byte("ne\n"))
	require.True(t, closed(done), "across two writes")
	require.True(t, closed(done2), "every watcher of the text")
	require.False(t, closed(other))
	require.Equal(t, "line=started\nline=done\n", b.String())
}

func TestBufferTakesConcurrentWrites(t *testing.T) {
	t.Parallel()
	var b testenv.Buffer
	last := b.Watch("w7 n99\n")
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for n := range 100 {
				_, _ = fmt.Fprintf(&b, "w%d n%d\n", w, n)
				_ = b.String()
			}
		})
	}
	wg.Wait()
	require.True(t, closed(last))
	require.Len(t, b.String(), 8*(100*len("w0 n0\n")+90))
}

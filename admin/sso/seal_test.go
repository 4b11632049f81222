package sso

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSealer(t *testing.T) {
	t.Parallel()
	s, err := NewSealer([]byte("0123456789abcdef-executor"))
	require.NoError(t, err)
	sealed := s.Seal("refresh-token-1")
	require.NotContains(t, sealed, "refresh-token-1")
	require.NotEqual(t, sealed, s.Seal("refresh-token-1"), "a fresh nonce each time")
	plain, err := s.Open(sealed)
	require.NoError(t, err)
	require.Equal(t, "refresh-token-1", plain)
	empty, err := s.Open(s.Seal(""))
	require.NoError(t, err)
	require.Empty(t, empty)

	other, err := NewSealer([]byte("another secret of 16+ bytes"))
	require.NoError(t, err)
	_, err = other.Open(sealed)
	require.ErrorIs(t, err, ErrUnsealable)
	_, err = s.Open(sealed[:len(sealed)-2] + strings.Repeat("A", 2))
	require.ErrorIs(t, err, ErrUnsealable, "damaged")
	_, err = s.Open("plain-token")
	require.ErrorIs(t, err, ErrUnsealable)
	_, err = NewSealer([]byte("short"))
	require.Error(t, err)
}

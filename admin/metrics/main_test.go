package metrics_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/shardjob/shardjob/deploy/dev/testenv"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(testenv.Wrap(m)) }

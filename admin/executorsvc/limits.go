package executorsvc

// Lengths of the heartbeat's identity fields: the widths of the executor
// table's columns (sql/*/migrations/0001_init and 0011_executor_incarnation).
// They are checked before any write so that a long value is a 400 naming the
// field, the same on both dialects: MariaDB (strict mode) would refuse it
// with a database error, SQLite would store it whole.
const (
	// maxInstanceIDLen is executor.instance_id VARCHAR(191), the usual width
	// of an indexed utf8mb4 column: 191 × 4 bytes fit the 767-byte index key
	// of InnoDB's older row formats (uk_executor_instance is unique).
	maxInstanceIDLen = 191
	// maxAppLen is executor.app VARCHAR(64), the width of every app column.
	maxAppLen = 64
	// maxAddressLen is executor.address VARCHAR(255): the base URL the
	// admin pushes to.
	maxAddressLen = 255
	// maxIncarnationLen is executor.incarnation VARCHAR(64).
	maxIncarnationLen = 64
)

// Bounds of the work one heartbeat makes the admin do.
const (
	// maxReleasedPerHeartbeat caps the released tokens moved per heartbeat
	// (ReleaseAttempts locks each one, in one transaction). Nothing is lost
	// beyond it: the executor lists a released token in every heartbeat
	// until the response's Cancel confirms it, so the next heartbeats move
	// the rest.
	maxReleasedPerHeartbeat = 10000
	// maxAssignmentsPerHeartbeat caps the unacknowledged slots delivered in
	// one heartbeat response: the slots of the largest run (jobdef.MaxSlots,
	// placement.MaxSlots) fit in one response; the next heartbeat brings the
	// rest.
	maxAssignmentsPerHeartbeat = 1024
	// maxLoggedTokens caps the tokens listed in the log line of slots lost
	// by reconciliation (their count is logged in full).
	maxLoggedTokens = 20
)

// Bounds of what an executor may ship in one logs request (the body limit
// applies too). The SDK sends at most 500 lines (sdk.DefaultLogBatch) of
// 4 KiB (sdk.DefaultLogLineMax) by default.
const (
	// maxLogLinesPerRequest caps the lines, and the drop counts, of one
	// request: ten times the SDK's default batch, which bounds the
	// transaction one request holds.
	maxLogLinesPerRequest = 5000
	// maxLogMessageBytes: a longer message is cut (on a rune boundary,
	// marked with "…"); twice the SDK's default cut.
	maxLogMessageBytes = 8 << 10
	// maxLogAttrsBytes: longer attributes are dropped (a cut JSON object
	// would not be one).
	maxLogAttrsBytes = 8 << 10
	// maxLogLevel clamps a line's level to ±100: slog's levels are -4
	// (debug) to 8 (error), with levels in between (INFO+2) that the console
	// shows as slog names them; beyond ±100 a level is nonsense.
	maxLogLevel = 100
)

package apitypes

// XXLJobLog is the answer of GET /xxljob/attempts/{token}/log: the lines
// from FromLine to ToLine of the attempt's log on its XXL-JOB executor, and
// whether the log is complete.
type XXLJobLog struct {
	Token    int64  `json:"token"`
	FromLine int    `json:"from_line"`
	ToLine   int    `json:"to_line"`
	Content  string `json:"content"`
	End      bool   `json:"end"`
}

// XXLJobKilled is the answer of POST /xxljob/attempts/{token}/kill.
type XXLJobKilled struct {
	OK    bool  `json:"ok"`
	Token int64 `json:"token"`
}

package apitypes

// AlarmGroupQuery selects a page of GET /alarms: the filter (its query
// parameters open, severity, kind, app, job_id), before (a group id) and
// limit (50 by default, at most 200).
type AlarmGroupQuery struct {
	Filter AlarmFilterBody
	Before int64
	Limit  int
}

// AlarmGroupList is the answer of GET /alarms: a page of groups, whether
// more follow, and how many alarms match the filter (counted up to a
// bound: MatchingCapped says the count stopped there).
type AlarmGroupList struct {
	Groups         []AlarmGroupView `json:"groups"`
	More           bool             `json:"more"`
	MatchingAlarms int64            `json:"matching_alarms"`
	MatchingCapped bool             `json:"matching_capped"`
}

// AlarmGroupAlarms is the answer of GET /alarm-groups/{id}/alarms: the
// group, a page of its members newest first, its count and whether more
// follow.
type AlarmGroupAlarms struct {
	Group  AlarmGroupView `json:"group"`
	Alarms []AlarmView    `json:"alarms"`
	Total  int            `json:"total"`
	More   bool           `json:"more"`
}

// AlarmBulkResult is the answer of POST /alarms/bulk: the action and how
// many alarms it changed.
type AlarmBulkResult struct {
	Action  string `json:"action"`
	Changed int64  `json:"changed"`
}

// AlarmChannelTest is the answer of POST /alarm-channels/{name}/test.
type AlarmChannelTest struct {
	Sent    bool   `json:"sent"`
	Channel string `json:"channel"`
}

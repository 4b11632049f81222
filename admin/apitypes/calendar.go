package apitypes

import "time"

// CalendarDay is one special day of a business calendar: a holiday or an
// extra working day (a make-up workday), with an optional name.
type CalendarDay struct {
	Date string `json:"date"` // YYYY-MM-DD
	Kind string `json:"kind"` // holiday | workday
	Name string `json:"name,omitempty"`
}

// CalendarImport is a calendar's days as a file: "ics" (iCalendar, all-day
// events; CATEGORIES:WORKDAY marks a working day) or "csv" (date,kind[,name]).
// See docs/schedules.md, "Business calendars".
type CalendarImport struct {
	Format  string `json:"format"`
	Content string `json:"content"`
}

// CalendarSpec creates or replaces a calendar (POST /api/v1/calendars, PUT
// /api/v1/calendars/{id}). Days come either as a list or as an Import, not
// both. App "" is a global calendar (admins only). Revision is required
// when replacing: the revision read (optimistic lock).
type CalendarSpec struct {
	App         string          `json:"app"`
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Week        string          `json:"week,omitempty"` // default MON-FRI
	Days        []CalendarDay   `json:"days,omitempty"`
	Import      *CalendarImport `json:"import,omitempty"`
	Revision    int64           `json:"revision,omitempty"`
}

// Calendar is a business calendar as the API returns it; Days only from GET
// /api/v1/calendars/{id}. Version is the content hash a run records.
type Calendar struct {
	ID          int64         `json:"id"`
	App         string        `json:"app"`
	Name        string        `json:"name"`
	Description string        `json:"description,omitempty"`
	Week        string        `json:"week"`
	Holidays    int           `json:"holidays"`
	Workdays    int           `json:"workdays"`
	Days        []CalendarDay `json:"days,omitempty"`
	Version     string        `json:"version"`
	Revision    int64         `json:"revision"`
	CreatedAt   time.Time     `json:"created_at"`
	UpdatedAt   time.Time     `json:"updated_at"`
	UpdatedBy   string        `json:"updated_by"`
}

package cli

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/calendar"
)

// cmdCalendar runs "calendar import" and "calendar export".
func cmdCalendar(ctx context.Context, args []string, env Env, c conn) error {
	if len(args) == 0 {
		return usagef("calendar: give import or export")
	}
	switch args[0] {
	case "import":
		return cmdCalendarImport(ctx, args[1:], env, c)
	case "export":
		return cmdCalendarExport(ctx, args[1:], env, c)
	}
	return usagef("calendar %q: give import or export", args[0])
}

// cmdCalendarImport brings a calendar file (.ics or .csv) to the admin:
// created when the app has no calendar of that name, replaced (with the
// revision read) when its days or week differ, left alone when they are
// the same, so importing a file twice changes nothing.
func cmdCalendarImport(ctx context.Context, args []string, env Env, c conn) error {
	fs := newFlagSet("calendar import", env, &c)
	app := fs.String("app", "", `the calendar's app ("" with --global: a global calendar, admins only)`)
	global := fs.Bool("global", false, "a global calendar (no app)")
	name := fs.String("name", "", "the calendar's name (default: the file name without its extension)")
	week := fs.String("week", "MON-FRI", "the base week, e.g. MON-FRI or SUN-THU")
	desc := fs.String("description", "", "a description")
	format := fs.String("format", "", "ics or csv (default: from the file's extension)")
	file, err := oneArg(fs, args, "calendar file (.ics or .csv)")
	if err != nil {
		return err
	}
	if (*app == "") != *global {
		return usagef("calendar import: give --app APP, or --global for a calendar of every app")
	}
	if *name == "" {
		*name = strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
	}
	if *format == "" {
		*format = strings.TrimPrefix(strings.ToLower(filepath.Ext(file)), ".")
	}
	data, err := readLimited(file, env, calendar.MaxImportBytes)
	if err != nil {
		return err
	}
	// Read here first: a mistake is reported with the file's line before
	// anything is sent, and the version tells whether anything changes.
	var entries []calendar.Entry
	switch *format {
	case "ics":
		entries, err = calendar.ParseICS(data)
	case "csv":
		entries, err = calendar.ParseCSV(data)
	default:
		return usagef("calendar import: format %q: use --format ics or csv", *format)
	}
	if err != nil {
		return usagef("%s: %v", file, err)
	}
	wk, err := calendar.ParseWeek(*week)
	if err != nil {
		return usagef("calendar import: --week: %v", err)
	}
	def := calendar.Definition{Name: *name, Week: wk, Entries: entries}
	if err := def.Validate(); err != nil {
		return usagef("%s: %v", file, err)
	}
	cl, err := c.client(env)
	if err != nil {
		return err
	}
	spec := apitypes.CalendarSpec{App: *app, Name: *name, Description: *desc, Week: wk.String(),
		Import: &apitypes.CalendarImport{Format: "csv", Content: string(calendar.FormatCSV(entries))}}
	have, found, err := findCalendar(ctx, cl, *app, *name)
	if err != nil {
		return err
	}
	ref := calendarRef(*app, *name)
	var out apitypes.Calendar
	switch {
	case !found:
		if err := cl.Do(ctx, http.MethodPost, "/api/v1/calendars", spec, &out); err != nil {
			return err
		}
		_, err = fmt.Fprintf(env.Stdout, "calendar %s created (id %d): %s, version %s\n", ref, out.ID, dayCounts(out), out.Version)
	case have.Version == def.Version() && have.Description == *desc:
		_, err = fmt.Fprintf(env.Stdout, "calendar %s unchanged (id %d, version %s)\n", ref, have.ID, have.Version)
	default:
		spec.Revision = have.Revision
		if err := cl.Do(ctx, http.MethodPut, "/api/v1/calendars/"+strconv.FormatInt(have.ID, 10), spec, &out); err != nil {
			return err
		}
		_, err = fmt.Fprintf(env.Stdout, "calendar %s replaced (id %d, revision %d): %s, version %s\n",
			ref, out.ID, out.Revision, dayCounts(out), out.Version)
	}
	return err
}

// dayCounts says how many special days calendar c has, in English:
// "33 holidays, 6 extra working days", "1 holiday, no extra working days".
// Its workdays are the extra working days (make-up days), not all the
// working days of its year.
func dayCounts(c apitypes.Calendar) string {
	return countOf(c.Holidays, "holiday", "holidays") + ", " + countOf(c.Workdays, "extra working day", "extra working days")
}

// countOf is n with the noun that fits it: "no days", "1 day", "2 days".
func countOf(n int, one, many string) string {
	switch n {
	case 0:
		return "no " + many
	case 1:
		return "1 " + one
	default:
		return strconv.Itoa(n) + " " + many
	}
}

// cmdCalendarExport prints a calendar's days as CSV (date,kind,name), the
// format import reads back.
func cmdCalendarExport(ctx context.Context, args []string, env Env, c conn) error {
	fs := newFlagSet("calendar export", env, &c)
	ref, err := oneArg(fs, args, "calendar (id, app/name, or name of a global calendar)")
	if err != nil {
		return err
	}
	cl, err := c.client(env)
	if err != nil {
		return err
	}
	id, err := resolveCalendar(ctx, cl, ref)
	if err != nil {
		return err
	}
	var cal apitypes.Calendar
	if err := cl.Do(ctx, http.MethodGet, "/api/v1/calendars/"+strconv.FormatInt(id, 10), nil, &cal); err != nil {
		return err
	}
	entries := make([]calendar.Entry, 0, len(cal.Days))
	for _, d := range cal.Days {
		date, err := calendar.ParseDate(d.Date)
		if err != nil {
			return fmt.Errorf("calendar %d: day %q: %w", id, d.Date, err)
		}
		entries = append(entries, calendar.Entry{Date: date, Kind: calendar.Kind(d.Kind), Name: d.Name})
	}
	_, err = env.Stdout.Write(calendar.FormatCSV(entries))
	return err
}

func calendarRef(app, name string) string {
	if app == "" {
		return name + " (global)"
	}
	return app + "/" + name
}

// listCalendars reads the calendars the token may see.
func listCalendars(ctx context.Context, cl *Client) ([]apitypes.Calendar, error) {
	var out struct {
		Calendars []apitypes.Calendar `json:"calendars"`
	}
	err := cl.Do(ctx, http.MethodGet, "/api/v1/calendars", nil, &out)
	return out.Calendars, err
}

func findCalendar(ctx context.Context, cl *Client, app, name string) (apitypes.Calendar, bool, error) {
	cals, err := listCalendars(ctx, cl)
	if err != nil {
		return apitypes.Calendar{}, false, err
	}
	for _, cal := range cals {
		if cal.App == app && cal.Name == name {
			return cal, true, nil
		}
	}
	return apitypes.Calendar{}, false, nil
}

// resolveCalendar turns an id, app/name or the name of a global calendar
// into an id.
func resolveCalendar(ctx context.Context, cl *Client, ref string) (int64, error) {
	if id, err := strconv.ParseInt(ref, 10, 64); err == nil && id > 0 {
		return id, nil
	}
	app, name, ok := strings.Cut(ref, "/")
	if !ok {
		app, name = "", ref
	}
	cal, found, err := findCalendar(ctx, cl, app, name)
	if err != nil {
		return 0, err
	}
	if !found {
		return 0, &APIError{Method: http.MethodGet, Path: "/api/v1/calendars", Status: http.StatusNotFound, Msg: "calendar " + calendarRef(app, name) + " does not exist"}
	}
	return cal.ID, nil
}

// readLimited reads a file ("-": stdin) of at most limit bytes.
func readLimited(file string, env Env, limit int) ([]byte, error) {
	var r io.Reader
	if file == "-" {
		r = env.Stdin
	} else {
		f, err := os.Open(file)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", file, err)
		}
		defer func() { _ = f.Close() }() // read only: nothing to lose
		r = f
	}
	data, err := io.ReadAll(io.LimitReader(r, int64(limit)+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", file, err)
	}
	if len(data) > limit {
		return nil, usagef("%s is larger than %d bytes", file, limit)
	}
	return data, nil
}

package server

import "fmt"

// SettingError is a Config value the admin cannot start with. Setting
// names it as the admin's settings are named on the command line, in the
// environment and in the config file ("db-dsn" for Config.DBDSN), so that
// the command can show it in its own terms (--db-dsn, SHARDJOB_DB_DSN);
// Error reads "setting db-dsn: …".
type SettingError struct {
	Setting string
	Err     error
}

func (e *SettingError) Error() string { return "setting " + e.Setting + ": " + e.Err.Error() }

func (e *SettingError) Unwrap() error { return e.Err }

// settingErr returns a *SettingError for setting with a formatted message.
func settingErr(setting, format string, args ...any) error {
	return &SettingError{Setting: setting, Err: fmt.Errorf(format, args...)}
}

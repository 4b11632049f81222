// Package msg holds the admin's messages for people — why a run failed or
// waits, why a slot attempt ended, what an alarm says — as a code with named
// arguments, so that the console can show them in the reader's language
// while API clients keep reading English.
//
// A Msg is stored next to its English text (columns error and error_msg,
// message and message_msg): the text for API clients, alarm channels and
// old readers; the code and arguments for the console, which looks the code
// up as "srv.<code>" in its dictionaries and falls back to the English text
// for a code it does not know (an older console) or a row written before
// codes existed.
//
// Every code has an English template here (Catalog) with {name}
// placeholders, the syntax of the console's dictionaries; a test checks that
// web/static/i18n/en.json holds the same templates and zh-CN.json the same
// placeholders. An argument is a string or a nested Msg (a reason inside a
// reason), which both sides render in turn. Text that comes from outside the
// admin (a handler's error, an operator's cancel reason, an XXL-JOB
// executor's answer) is an argument, never translated.
//
// Validation errors are messages too: a Msg is an error (its English), and
// the validators of admin/schedule, admin/calendar, admin/jobdef and
// admin/auth return errors that are or carry one (Of finds it), which the
// API answers per field as field_codes next to the English fields; so do
// the built-in handlers' params (admin/jobdef makes executor/builtin's
// problems codes "builtin.<code>", which have no constants here) and a
// calendar file's line errors. Text with no code yet (the workflow
// validator's) travels as the argument of Text, shown as it is in every
// language.
package msg

package schedule

// Calendar arithmetic on the proleptic Gregorian calendar, in plain integers.
// A "wall" value is a local date and time of day counted in seconds since
// 1970-01-01 00:00:00 as if the zone were UTC; instant = wall - offset.

const secondsPerDay = 86400

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// daysFromCivil returns the day number (days since 1970-01-01) of y-m-d.
// Years are shifted to start in March so the leap day is the last day of the
// shifted year; eras are 400-year cycles of 146097 days.
func daysFromCivil(y int64, m, d int) int64 {
	if m <= 2 {
		y--
	}
	era := floorDiv(y, 400)
	yearOfEra := y - era*400
	shiftedMonth := int64((m + 9) % 12) // March = 0 ... February = 11
	dayOfYear := (153*shiftedMonth+2)/5 + int64(d) - 1
	dayOfEra := yearOfEra*365 + yearOfEra/4 - yearOfEra/100 + dayOfYear
	return era*146097 + dayOfEra - 719468
}

// civilFromDays is the inverse of daysFromCivil.
func civilFromDays(days int64) (y int64, m, d int) {
	days += 719468
	era := floorDiv(days, 146097)
	dayOfEra := days - era*146097
	yearOfEra := (dayOfEra - dayOfEra/1460 + dayOfEra/36524 - dayOfEra/146096) / 365
	dayOfYear := dayOfEra - (365*yearOfEra + yearOfEra/4 - yearOfEra/100)
	shiftedMonth := (5*dayOfYear + 2) / 153
	d = int(dayOfYear - (153*shiftedMonth+2)/5 + 1)
	if shiftedMonth < 10 {
		m = int(shiftedMonth + 3)
	} else {
		m = int(shiftedMonth - 9)
	}
	y = yearOfEra + era*400
	if m <= 2 {
		y++
	}
	return y, m, d
}

func isLeap(y int64) bool { return y%4 == 0 && (y%100 != 0 || y%400 == 0) }

var monthDays = [13]int{0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}

func daysIn(y int64, m int) int {
	if m == 2 && isLeap(y) {
		return 29
	}
	return monthDays[m]
}

// weekday returns 0 (Sunday) ... 6 (Saturday) for a day number;
// 1970-01-01 was a Thursday.
func weekday(days int64) int {
	w := (days + 4) % 7
	if w < 0 {
		w += 7
	}
	return int(w)
}

// wallOf composes a wall value.
func wallOf(y int64, mo, d, h, mi, s int) int64 {
	return daysFromCivil(y, mo, d)*secondsPerDay + int64(h*3600+mi*60+s)
}

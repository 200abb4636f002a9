package textnorm

import (
	"reflect"
	"strings"
	"testing"
)

// read is what the frontend does with a document: its sentences, each normalised.
func read(doc string) []string {
	var out []string
	for _, s := range Sentences(doc) {
		out = append(out, Normalize(s))
	}
	return out
}

// The classes of issue 20, item 16, several sentences each: what a listener must hear.
func TestReadingClasses(t *testing.T) {
	classes := map[string][]struct {
		in   string
		want []string
	}{
		// An abbreviation followed by a lower-case word, a number or the kind of word it expects does not end the
		// sentence; before other capitalised words, abbreviations that often end sentences ("etc.", "Inc.") may.
		"abbreviations inside a sentence": {
			{"She lives at Apt. 4B on Elm St. in Springfield.", []string{"She lives at Apartment four B on Elm Street in Springfield."}},
			{"Acme Co. Ltd. reported a loss.", []string{"Acme Company Limited reported a loss."}},
			{"Smith Bros. & Co. Ltd. won.", []string{"Smith Brothers and Company Limited won."}},
			{"Acme Pty. Ltd. Has offices.", []string{"Acme Proprietary Limited.", "Has offices."}},
			{"The Dept. of Energy and Harvard Univ. agreed.", []string{"The Department of Energy and Harvard University agreed."}},
			{"Drive down Sunset Blvd. to Fifth Ave. NW today.", []string{"Drive down Sunset Boulevard to Fifth Avenue NW today."}},
			{"Elm St. Suite 5 is ours.", []string{"Elm Street Suite five is ours."}},
			{"We climbed Mt. Everest, then Mt. St. Helens.", []string{"We climbed Mount Everest, then Mount Saint Helens."}},
			{"Ft. Worth is far.", []string{"Fort Worth is far."}},
			{"See No. 5, Vol. II and Fig. A1 here.", []string{"See Number five, Volume two and Figure A one here."}},
			{"Apt. 12, Bldg. C and Ste. 300 are free.", []string{"Apartment twelve, Building C and Suite three hundred are free."}},
			{"It is approx. 5 kg, cats vs. dogs.", []string{"It is approximately five kilograms, cats versus dogs."}},
			{"He is 5 ft. 3 in. tall.", []string{"He is five feet three inches tall."}},
			{"The deadline is Nov. 30 at noon, not Dec. 2.", []string{"The deadline is November thirtieth at noon, not December second."}},
			{"Pens, paper, etc. and food.", []string{"Pens, paper, et cetera and food."}},
		},
		"abbreviations that end a sentence": {
			{"Bring pens, paper, etc. Then leave.", []string{"Bring pens, paper, et cetera.", "Then leave."}},
			{"They hired Globex Corp. and Initech Inc. Both failed.",
				[]string{"They hired Globex Corporation and Initech Incorporated.", "Both failed."}},
			{"Meet me at 5th Ave. Then go north.", []string{"Meet me at fifth Avenue.", "Then go north."}},
			{"Go to 221B Baker St. It is famous.", []string{"Go to two hundred twenty-one B Baker Street.", "It is famous."}},
			{"We left in Aug. Then we came back.", []string{"We left in August.", "Then we came back."}},
			{"The answer was no. I agree.", []string{"The answer was no.", "I agree."}},
			{"It weighs 5 lb. The box is light.", []string{"It weighs five pounds.", "The box is light."}},
			{"It starts at 10 a.m. Tomorrow we go.", []string{"It starts at ten AM.", "Tomorrow we go."}},
		},
		// A date or time that does not exist is read as what is written, never as a date or time, never with its
		// slashes.
		"impossible dates and times": {
			{"The date 31/02/2020 is wrong.", []string{"The date thirty-one slash zero two slash two thousand twenty is wrong."}},
			{"The date 13/13/2020 is wrong.", []string{"The date thirteen slash thirteen slash two thousand twenty is wrong."}},
			{"It was 04/31/2023.", []string{"It was zero four slash thirty-one slash two thousand twenty-three."}},
			{"Not 2/29/2023 but 2/29/2024.", []string{"Not two slash twenty-nine slash two thousand twenty-three but February twenty-ninth, twenty twenty-four."}},
			{"It was 30/02 again, not 25/03.", []string{"It was thirty slash zero two again, not March twenty-fifth."}},
			{"ISO 2023-02-29 is no day.", []string{"ISO two thousand twenty-three dash zero two dash twenty-nine is no day."}},
			{"Dotted 31.02.2020 or 25.12.2024.", []string{"Dotted thirty-one dot zero two dot two thousand twenty or December twenty-fifth, twenty twenty-four."}},
			{"It was Feb 30 last year.", []string{"It was February thirty last year."}},
			{"February 29, 2021 never came; February 29, 2020 did.",
				[]string{"February twenty-nine, twenty twenty-one never came; February twenty-ninth, twenty twenty did."}},
			{"April 31 and June 31, 2020.", []string{"April thirty-one and June thirty-one, twenty twenty."}},
			{"On 30 Feb 2020 and 31 April.", []string{"On thirty February twenty twenty and thirty-one April."}},
			{"Meet at 25:61 tonight.", []string{"Meet at twenty-five colon sixty-one tonight."}},
			{"Meet at 12:60 or 7:75 pm.", []string{"Meet at twelve colon sixty or seven colon seventy-five PM."}},
			{"At 24:30 no, at 24:00 yes, 23:59:60 no.",
				[]string{"At twenty-four colon thirty no, at twenty-four hundred yes, twenty-three colon fifty-nine colon sixty no."}},
			{"The code 1/2/3/4 is odd.", []string{"The code one slash two slash three slash four is odd."}},
		},
		// Letters after a number are a magnitude or a unit only where they are one.
		"letters after numbers": {
			{"He lives in Flat 3B now.", []string{"He lives in Flat three B now."}},
			{"Go to Room 12A, Gate 5C or Seat 14F.", []string{"Go to Room twelve A, Gate five C or Seat fourteen F."}},
			{"Unit 7B, Platform 9B and Terminal 2B.", []string{"Unit seven B, Platform nine B and Terminal two B."}},
			{"We do B2B sales in 3D.", []string{"We do B two B sales in three D."}},
			{"Vitamin B12 and 12B are labels.", []string{"Vitamin B twelve and twelve B are labels."}},
			{"The firm is worth $3B.", []string{"The firm is worth three billion dollars."}},
			{"It costs 2B euros and revenue was 3B.", []string{"It costs two billion euros and revenue was three billion."}},
			{"The run took 1h 30m total.", []string{"The run took one hour thirty minutes total."}},
			{"The run took 2h 15m 10s.", []string{"The run took two hours fifteen minutes ten seconds."}},
			{"Cook 1h30m, rest 5m 30s.", []string{"Cook one hour thirty minutes, rest five minutes thirty seconds."}},
			{"It took 1 h 30 m and 1 hr 20 min.", []string{"It took one hour thirty minutes and one hour twenty minutes."}},
			{"Walk 5m to the left, then 100m.", []string{"Walk five meters to the left, then one hundred meters."}},
			{"Wait 30s, or every 10s, or 15s.", []string{"Wait thirty seconds, or every ten seconds, or fifteen seconds."}},
			{"In the 90s and in her 20s, 10s of people came.", []string{"In the nineties and in her twenties, tens of people came."}},
		},
		// Month and measure abbreviations are read out.
		"month and measure abbreviations": {
			{"We moved in Sept. and left in Oct. of that year.", []string{"We moved in September and left in October of that year."}},
			{"It happened in Jan. 2020 and in Feb. 2021.", []string{"It happened in January twenty twenty and in February twenty twenty-one."}},
			{"The meeting is on Sept. 5 at noon.", []string{"The meeting is on September fifth at noon."}},
			{"Add 2 tbsp. of sugar and 1 tsp. salt.", []string{"Add two tablespoons of sugar and one teaspoon salt."}},
			{"Add a tbsp. of oil and two tsp. of salt per lb. of meat.",
				[]string{"Add a tablespoon of oil and two teaspoons of salt per pound of meat."}},
			{"It weighs 5 oz. or 2 lb. or 3 lbs. total.", []string{"It weighs five ounces or two pounds or three pounds total."}},
			{"Use 1 pt. or 2 qt. or 3 gal. of water.", []string{"Use one pint or two quarts or three gallons of water."}},
			{"It is 6 ft. tall and 3 in. wide.", []string{"It is six feet tall and three inches wide."}},
			{"Run 100 yd. then 2 mi. more.", []string{"Run one hundred yards then two miles more."}},
			{"It holds 8 fl. oz. in 12 sq. ft. and 2 cu. in.", []string{"It holds eight fluid ounces in twelve square feet and two cubic inches."}},
			{"Put it in. Then close it.", []string{"Put it in.", "Then close it."}},
			{"Open Mon. through Fri., and Sat. and Sun. in summer.",
				[]string{"Open Monday through Friday, and Saturday and Sunday in summer."}},
			{"We went out on Sun. The weather was fine.", []string{"We went out on Sun.", "The weather was fine."}},
			{"The Wizard of Oz. He played LB and 12 pt type.", []string{"The Wizard of Oz.", "He played LB and twelve pt type."}},
		},
	}
	for class, cases := range classes {
		for _, c := range cases {
			if got := read(c.in); !reflect.DeepEqual(got, c.want) {
				t.Errorf("%s: %q\n got  %q\n want %q", class, c.in, got, c.want)
			}
		}
	}
}

// A normalised sentence keeps no slash between digit groups and no digit.
func TestImpossibleDatesKeepNoSlashes(t *testing.T) {
	for _, in := range []string{"31/02/2020", "13/13/2020", "00/00/0000", "30/02", "99/99/99", "12/34/5678/9", "2/30/21"} {
		if got := Normalize(in); strings.ContainsAny(got, "/0123456789") {
			t.Errorf("Normalize(%q) = %q", in, got)
		}
	}
}

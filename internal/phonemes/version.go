package phonemes

/*
#cgo LDFLAGS: -lespeak-ng
#include <espeak-ng/speak_lib.h>
*/
import "C"

// EspeakVersion is the version of the libespeak-ng that this binary is linked with (espeak_Info needs no
// initialisation).
func EspeakVersion() string {
	return C.GoString(C.espeak_Info(nil))
}

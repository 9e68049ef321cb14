// pixman.h includes <pixman-version.h>, which sits beside it in /usr/include/pixman-1 (Debian's
// libpixman-1-dev). CImageCodecs.c includes <pixman-1/pixman.h> without pkg-config's -I (which
// would link pixman: it is loaded with dlopen at the first resample instead, docs/startup.md);
// this forwarder, on the target's include path, makes that include resolve. Not part of the
// module's API (the umbrella header CImageCodecs.h does not include it).
#include <pixman-1/pixman-version.h>

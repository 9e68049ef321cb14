// pixman's header, found through pkg-config (pixman-1: Debian's libpixman-1-dev).
#include <pixman.h>

// libqrencode (Debian: libqrencode-dev), which draws the QR codes of enrollment links.
#include <qrencode.h>

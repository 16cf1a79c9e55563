/* placeholder */
#include "config.h"

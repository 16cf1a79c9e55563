/* version.c - placeholder, being written */
#include "config.h"

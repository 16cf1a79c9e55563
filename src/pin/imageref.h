/* imageref.h - placeholder */

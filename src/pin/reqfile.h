/* reqfile.h - placeholder */

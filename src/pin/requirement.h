/* requirement.h - placeholder */

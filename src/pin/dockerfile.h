/* dockerfile.h - placeholder */

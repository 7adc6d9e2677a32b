/** The kit's version; a unit test keeps it equal to package.json's. */
export const VERSION = "0.1.0";

// Imported first by a benchmark: the app runs in production mode, as the `lectern` command runs it
// (src/bin.js), since graphql-js and Pothos read NODE_ENV once, when they load.
process.env.NODE_ENV ??= 'production';

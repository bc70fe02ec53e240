int fromdir;

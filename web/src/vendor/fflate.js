// Entry point for the vendored fflate bundle: zip and unzip for exporting/importing solutions.
export { zipSync, unzipSync, strToU8, strFromU8 } from "fflate";

// `npx tsx scripts/bench/heic-decode.ts FILE.heic [ROUNDS]`
//
// The HEIC decoder alone (libheif in WebAssembly, lambda/origin/image/heif.ts),
// in this fresh process as in a transform child: the first round includes
// compiling the module, as every HEIC miss does (its child is replaced after).
// Prints each round's wall time and CPU seconds, and the process's peak RSS;
// for a HEIC whose colour is not sRGB (an iPhone's Display P3), also the
// conversion of its pixels to sRGB at full size (colour-profile.ts).
// docs/performance.md ("HEIC decode") has the command that made the files.

import { readFileSync } from 'node:fs';
import { withColourProfile } from '../../lambda/origin/image/colour-profile';
import { decodeHeif, heifHeader } from '../../lambda/origin/image/heif';

const peakRssMb = () => Number(/VmHWM:\s*(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1]) / 1024;

const [file, rounds = '3'] = process.argv.slice(2);
if (!file) {
  console.error('usage: npx tsx scripts/bench/heic-decode.ts FILE.heic [ROUNDS]');
  process.exit(2);
}
const bytes = readFileSync(file);
const { colourProfile } = heifHeader(bytes);
console.log(`${file}: ${(bytes.length / 1024 / 1024).toFixed(1)} MB, peak RSS before ${peakRssMb().toFixed(0)} MB`);
for (let round = 1; round <= Number(rounds); round++) {
  const [start, cpu] = [performance.now(), process.cpuUsage()];
  const pixels = await decodeHeif(bytes);
  const { width, height } = pixels;
  const used = process.cpuUsage(cpu);
  const seconds = (used.user + used.system) / 1e6;
  const megapixels = (width * height) / 1e6;
  console.log(
    `round ${round}: ${width}x${height}, ${Math.round(performance.now() - start)} ms, ${seconds.toFixed(2)} CPU s ` +
      `(${(seconds / megapixels).toFixed(3)} s/MP), peak RSS ${peakRssMb().toFixed(0)} MB`,
  );
  if (!colourProfile) continue;
  const [converting, conversionCpu] = [performance.now(), process.cpuUsage()];
  await (await withColourProfile(pixels, colourProfile, {})).raw().toBuffer();
  const conversion = process.cpuUsage(conversionCpu);
  const conversionSeconds = (conversion.user + conversion.system) / 1e6;
  console.log(
    `  to sRGB: ${Math.round(performance.now() - converting)} ms, ${conversionSeconds.toFixed(2)} CPU s ` +
      `(${(conversionSeconds / megapixels).toFixed(3)} s/MP), peak RSS ${peakRssMb().toFixed(0)} MB`,
  );
}

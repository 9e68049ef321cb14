// Writes cmyk-inks-lcms.icc: a small CMYK profile (an AToB0 table of 6^4 points to Lab, D50) whose
// inks follow a simple model the tests compute too (ColorProfileTests.cmykInks): each ink's
// fraction of ink multiplies the linear-light reflectance of red, green and blue by
// (1 - ink × absorption), with absorptions cyan (0.95, 0.25, 0.05), magenta (0.10, 0.90, 0.15),
// yellow (0.02, 0.05, 0.90), black (0.90, 0.90, 0.90); the reflectance is read as linear sRGB.
// Made with Little CMS 2.14: cc make-cmyk.c -llcms2 -lm && ./a.out
#include <lcms2.h>
#include <stdio.h>

static const double absorption[4][3] = {{0.95, 0.25, 0.05}, {0.10, 0.90, 0.15}, {0.02, 0.05, 0.90}, {0.90, 0.90, 0.90}};
static cmsHTRANSFORM to_lab;

static int sample(const cmsUInt16Number in[], cmsUInt16Number out[], void *cargo) {
    (void)cargo;
    double rgb[3] = {1, 1, 1};
    for (int ink = 0; ink < 4; ink++)
        for (int c = 0; c < 3; c++) rgb[c] *= 1 - in[ink] / 65535.0 * absorption[ink][c];
    cmsCIELab lab;
    cmsDoTransform(to_lab, rgb, &lab, 1);
    cmsFloat2LabEncoded(out, &lab);
    return 1;
}

static void logger(cmsContext c, cmsUInt32Number code, const char *text) { (void)c; fprintf(stderr, "lcms %u: %s\n", code, text); }
int main(void) {
    cmsSetLogErrorHandler(logger);
    // Linear sRGB (sRGB's primaries, a gamma 1.0 curve) to Lab D50, as Little CMS's sRGB does it.
    cmsCIExyY white = {0.3127, 0.3290, 1.0};
    cmsCIExyYTRIPLE primaries = {{0.64, 0.33, 1.0}, {0.30, 0.60, 1.0}, {0.15, 0.06, 1.0}};
    cmsToneCurve *linear = cmsBuildGamma(NULL, 1.0);
    cmsToneCurve *curves[3] = {linear, linear, linear};
    cmsHPROFILE linear_srgb = cmsCreateRGBProfile(&white, &primaries, curves);
    cmsHPROFILE lab = cmsCreateLab4Profile(NULL);
    to_lab = cmsCreateTransform(linear_srgb, TYPE_RGB_DBL, lab, TYPE_Lab_DBL, INTENT_RELATIVE_COLORIMETRIC, cmsFLAGS_NOOPTIMIZE);

    cmsHPROFILE profile = cmsCreateProfilePlaceholder(NULL);
    cmsSetProfileVersion(profile, 4.3);
    cmsSetDeviceClass(profile, cmsSigOutputClass);
    cmsSetColorSpace(profile, cmsSigCmykData);
    cmsSetPCS(profile, cmsSigLabData);
    cmsPipeline *table = cmsPipelineAlloc(NULL, 4, 3);
    cmsStage *clut = cmsStageAllocCLut16bit(NULL, 6, 4, 3, NULL);
    cmsStageSampleCLut16bit(clut, sample, NULL, 0);
    cmsPipelineInsertStage(table, cmsAT_BEGIN, cmsStageAllocToneCurves(NULL, 4, NULL));   // A: identity
    cmsPipelineInsertStage(table, cmsAT_END, clut);
    cmsPipelineInsertStage(table, cmsAT_END, cmsStageAllocToneCurves(NULL, 3, NULL));     // B: identity
    cmsWriteTag(profile, cmsSigAToB0Tag, table);
    cmsWriteTag(profile, cmsSigMediaWhitePointTag, cmsD50_XYZ());
    cmsMLU *description = cmsMLUalloc(NULL, 1);
    cmsMLUsetASCII(description, "en", "US", "CMYK inks (Little CMS, imgpolicy tests)");
    cmsWriteTag(profile, cmsSigProfileDescriptionTag, description);
    int ok = cmsSaveProfileToFile(profile, "cmyk-inks-lcms.icc");
    return ok ? 0 : 1;
}

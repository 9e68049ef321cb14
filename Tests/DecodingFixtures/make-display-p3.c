// Writes display-p3-lcms.icc: Display P3 (DCI-P3 primaries, D65 white, the sRGB transfer curve),
// the profile phones embed, made with Little CMS 2.14: cc make-display-p3.c -llcms2 && ./a.out
#include <lcms2.h>

int main(void) {
    cmsCIExyY white = {0.3127, 0.3290, 1.0};
    cmsCIExyYTRIPLE primaries = {{0.680, 0.320, 1.0}, {0.265, 0.690, 1.0}, {0.150, 0.060, 1.0}};
    cmsFloat64Number srgb[5] = {2.4, 1 / 1.055, 0.055 / 1.055, 1 / 12.92, 0.04045};
    cmsToneCurve *curve = cmsBuildParametricToneCurve(NULL, 4, srgb);
    cmsToneCurve *curves[3] = {curve, curve, curve};
    cmsHPROFILE profile = cmsCreateRGBProfile(&white, &primaries, curves);
    cmsMLU *description = cmsMLUalloc(NULL, 1);
    cmsMLUsetASCII(description, "en", "US", "Display P3 (Little CMS, imgpolicy tests)");
    cmsWriteTag(profile, cmsSigProfileDescriptionTag, description);
    cmsSetProfileVersion(profile, 4.3);
    int ok = cmsSaveProfileToFile(profile, "display-p3-lcms.icc");
    cmsCloseProfile(profile);
    return ok ? 0 : 1;
}
